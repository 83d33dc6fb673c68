#!/usr/bin/env python3
"""Merge a RegionServer profile's settings into hbase-site.xml: every key of the settings becomes
a <property> (its value replaced when the property exists, appended otherwise); every other
property, comment and order in the file is kept (the layout is re-indented).

    apply_profile.py SITE.xml SETTINGS.json [--base BASE.xml]

SETTINGS.json (or `-` for standard input) is either a flat map of hbase-site.xml properties
(what metctl's `datastore.hbase.restart_command` gets as {settings}) or metctl's node document
/etc/metctl/node.json ({"cluster", "profile", "hbase_site": {...}, ...}), whose `hbase_site` map
is applied together with `metctl.profile` = its profile. `--base` reads BASE.xml instead of
SITE.xml and writes the result to SITE.xml (a first boot: base file plus profile).

Idempotent: SITE.xml is rewritten only when its content changes (atomically), so a second run
prints "unchanged" and leaves the file's time alone. Bad input (a file that is not XML of
<configuration><property><name/><value/>, settings that are not a JSON map of scalars): one line
naming the file, exit 2. Standard library only: it runs on a fresh VM's python3.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

PROFILE_KEY = "metctl.profile"  # actuator/hbase.py reads the profile back from this property
MAX_BYTES = 4 << 20  # a site file or settings file is a few KiB; refuse anything absurd


class BadInput(Exception):
    """One line for the operator: the file, what was expected."""


def _read(path: str, what: str) -> str:
    try:
        if path == "-":
            text = sys.stdin.read(MAX_BYTES + 1)
        else:
            with open(path, encoding="utf-8") as f:
                text = f.read(MAX_BYTES + 1)
    except (OSError, UnicodeDecodeError) as err:
        raise BadInput(f"{path}: cannot read {what} ({getattr(err, 'strerror', None) or err})") from None
    if len(text) > MAX_BYTES:
        raise BadInput(f"{path}: {what} larger than {MAX_BYTES} bytes")
    return text


def _scalar(path: str, key: str, value: Any) -> str:
    if isinstance(value, bool):  # JSON true -> Hadoop's "true"
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    raise BadInput(f"{path}: setting {key!r}: expected a string or number, got {type(value).__name__}")


def load_settings(path: str) -> dict[str, str]:
    """The hbase-site.xml properties to apply, from a flat map or a node document."""
    try:
        doc = json.loads(_read(path, "the settings"))
    except json.JSONDecodeError as err:
        raise BadInput(f"{path}: expected a JSON map of hbase-site.xml settings ({err.msg}, "
                       f"line {err.lineno})") from None
    if not isinstance(doc, dict):
        raise BadInput(f"{path}: expected a JSON map of hbase-site.xml settings, got {type(doc).__name__}")
    if "profile" in doc and "cluster" in doc:  # metctl's node document
        site = doc.get("hbase_site")
        if not isinstance(site, dict) or not isinstance(doc["profile"], str):
            raise BadInput(f"{path}: node document without an `hbase_site` map of settings (written "
                           "by metctl's user data; an older metctl lacks it)")
        doc = {**site, PROFILE_KEY: doc["profile"]}
    out = {}
    for key, value in doc.items():
        if not key or key != key.strip() or any(c.isspace() for c in key):
            raise BadInput(f"{path}: setting {key!r}: expected a property name without spaces")
        out[key] = _scalar(path, key, value)
    return out


def load_site(path: str) -> tuple[ET.ElementTree, str]:
    """The parsed file and its prolog (XML declaration, stylesheet, licence comment: what
    precedes <configuration>, which the parser would drop), kept as written."""
    text = _read(path, "hbase-site.xml")
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    try:
        root = ET.fromstring(text, parser=parser)
    except ET.ParseError as err:
        raise BadInput(f"{path}: expected hbase-site.xml (<configuration> of <property>), "
                       f"not well-formed XML: {err}") from None
    if root.tag != "configuration":
        raise BadInput(f"{path}: expected <configuration> as the root element, got <{root.tag}>")
    for prop in root.findall("property"):
        if prop.find("name") is None or not (prop.findtext("name") or "").strip():
            raise BadInput(f"{path}: expected a <name> in every <property>")
    start = text.find("<configuration")
    prolog = text[:start].strip() if start > 0 else ""
    return ET.ElementTree(root), (prolog or '<?xml version="1.0"?>') + "\n"


def merge(tree: ET.ElementTree, settings: dict[str, str]) -> None:
    root = tree.getroot()
    by_name = {(p.findtext("name") or "").strip(): p for p in root.findall("property")}
    for key, value in settings.items():
        prop = by_name.get(key)
        if prop is None:
            prop = ET.SubElement(root, "property")
            ET.SubElement(prop, "name").text = key
            by_name[key] = prop
        node = prop.find("value")
        if node is None:
            node = ET.SubElement(prop, "value")
        node.text = value


def render(tree: ET.ElementTree, prolog: str) -> str:
    root = tree.getroot()
    # normalise whitespace so that merging into a hand-written file and re-merging give the
    # same bytes (idempotence): indent() rewrites every element's layout
    for el in root.iter():
        if el.text is not None and not el.text.strip() and len(el):
            el.text = None
        el.tail = None
    ET.indent(tree, "  ")
    return prolog + ET.tostring(root, encoding="unicode") + "\n"


def write_if_changed(path: str, text: str) -> bool:
    target = Path(path)
    try:
        if target.read_text(encoding="utf-8") == text:
            return False
    except OSError:
        pass
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # hbase-site.xml carries no secret; the RegionServer's user reads it
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    base = None
    if "--base" in args:
        i = args.index("--base")
        if i + 1 >= len(args):
            print("apply_profile: --base needs a file", file=sys.stderr)
            return 2
        base = args.pop(i + 1)
        args.pop(i)
    if len(args) != 2:
        print("usage: apply_profile.py SITE.xml SETTINGS.json|- [--base BASE.xml]", file=sys.stderr)
        return 2
    site, settings_file = args
    try:
        settings = load_settings(settings_file)
        tree, prolog = load_site(base or site)
        merge(tree, settings)
        changed = write_if_changed(site, render(tree, prolog))
    except BadInput as err:
        print(f"apply_profile: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"apply_profile: {site}: cannot write ({err.strerror or err})", file=sys.stderr)
        return 2
    print(f"{site}: {len(settings)} settings {'applied' if changed else 'unchanged'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
