"""Node configuration profiles (read, write, read_write, scan, default): loaded from YAML,
validated, and rendered to the HBase settings a RegionServer restarts with.

A profile is three numbers — block cache and memstore as fractions of the RegionServer heap,
and the HFile block size — and whether regions prefetch their files as they open; MET Table 1
for the four groups and HBase 2.6's stock values for `default`. HBase refuses to start when block cache + memstore exceed 0.8 of the heap (it keeps
20 % for everything else), so such a profile is bad input; above 0.65 metctl warns, as MET's
authors advise leaving room for the rest of the RegionServer.

Block size is not a RegionServer setting: it is a column-family attribute (BLOCKSIZE) of a
whole table, applied to HFiles written after it changes. metctl renders it separately and only
recommends it (`recommend_block_sizes`); it never alters tables itself.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from common.documents import MAX_YAML_BYTES, parse_yaml, read_text
from common.errors import BadInput
from decision.model import PROFILES, ClusterSnapshot, Plan

log = logging.getLogger(__name__)

PROFILE_DIR = Path(__file__).resolve().parent
MAX_HEAP_SHARE = 0.80  # HBase's own limit (HConstants.HBASE_CLUSTER_MINIMUM_MEMORY_THRESHOLD 0.2)
WARN_HEAP_SHARE = 0.65  # beyond this little heap is left for RPC, indexes, compaction


class ProfileError(BadInput):
    """Bad profile input: a BadInput (file, field, expected), so the CLI exits 2 on it."""


class NodeProfile(BaseModel):
    """One node configuration profile."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(..., description="Profile name: read, write, read_write, scan or default.")
    description: str = Field("", description="What the profile is for.")
    block_cache_fraction: float = Field(
        ..., gt=0, lt=1, description="Share of the RegionServer heap for the block cache "
        "(hfile.block.cache.size).")
    memstore_fraction: float = Field(
        ..., gt=0, lt=1, description="Share of the heap for all memstores together "
        "(hbase.regionserver.global.memstore.size).")
    block_size_kb: int = Field(
        ..., gt=0, le=16384, description="HFile block size in KiB: the column-family BLOCKSIZE "
        "recommended for tables served by this profile (advisory).")
    prefetch_on_open: bool = Field(
        False, description="Read a region's store files into the block cache as it opens "
        "(hbase.rs.prefetchblocksonopen, HBASE-9857; HBase's default: false), so a region that "
        "moves here serves from memory within seconds instead of warming miss by miss. The "
        "HBase guide advises against it when the node's data does not fit its block cache.")
    extra_settings: dict[str, str] = Field(
        default_factory=dict, description="Further hbase-site.xml properties for this profile, "
        "rendered as given (e.g. hbase.hregion.memstore.flush.size).")

    @field_validator("name")
    @classmethod
    def _known_name(cls, v: str) -> str:
        if v not in PROFILES:
            raise ValueError(f"one of {', '.join(PROFILES)}")
        return v

    @property
    def heap_share(self) -> float:
        return self.block_cache_fraction + self.memstore_fraction

    def warnings(self) -> list[str]:
        """What is allowed but unwise."""
        # `default` is HBase's stock configuration, which itself sits at 0.80: no warning for
        # what the operator already runs. 1e-9: 0.55 + 0.10 is 0.6500000000000001 in binary.
        if self.name != "default" and self.heap_share > WARN_HEAP_SHARE + 1e-9:
            return [f"profile {self.name}: block cache + memstore = {self.heap_share:.2f} of the "
                    f"heap (over {WARN_HEAP_SHARE:.2f} leaves little for the rest of the "
                    "RegionServer)"]
        return []


class ProfileOverride(BaseModel):
    """What a config's `profiles.<name>` changes in a shipped profile: only the fields given."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    block_cache_fraction: float | None = Field(
        None, gt=0, lt=1, description="Share of the RegionServer heap for the block cache "
        "(hfile.block.cache.size); unset: the shipped profile's.")
    memstore_fraction: float | None = Field(
        None, gt=0, lt=1, description="Share of the heap for all memstores together "
        "(hbase.regionserver.global.memstore.size); unset: the shipped profile's.")
    block_size_kb: int | None = Field(
        None, gt=0, le=16384, description="HFile block size in KiB (advisory); unset: the "
        "shipped profile's.")
    prefetch_on_open: bool | None = Field(
        None, description="hbase.rs.prefetchblocksonopen for nodes of this profile; unset: the "
        "shipped profile's (true).")
    extra_settings: dict[str, str] | None = Field(
        None, description="Further hbase-site.xml properties, replacing the shipped profile's "
        "extra settings; unset: those.")


def with_overrides(profiles: Mapping[str, NodeProfile], overrides: Mapping[str, ProfileOverride],
                   where: str = "profiles") -> dict[str, NodeProfile]:
    """`profiles` with each override's fields in place, each result checked as a profile file
    is (ProfileError naming `where.<name>.<field>`)."""
    out = dict(profiles)
    for name, override in overrides.items():
        if name not in out:
            raise ProfileError(where, name, f"one of {', '.join(out)}")
        merged = out[name].model_dump() | override.model_dump(exclude_none=True)
        try:
            out[name] = parse_profile(merged, where)
        except ProfileError as err:
            raise ProfileError(where, f"{name}.{err.field}", err.expected) from None
    return out


def _fraction(x: float) -> str:
    """0.1 -> "0.10", 0.425 -> "0.425": at least two decimals, never rounded away."""
    text = f"{x:.2f}"
    return text if float(text) == x else repr(float(x))


def parse_profile(data: Any, file: str = "<profile>") -> NodeProfile:
    """A profile from already-parsed YAML, or ProfileError naming file and field."""
    if not isinstance(data, Mapping):
        raise ProfileError(file, "", "a mapping of profile fields (name, block_cache_fraction, "
                                     "memstore_fraction, block_size_kb)")
    try:
        profile = NodeProfile.model_validate(dict(data))
    except ValidationError as err:
        first = err.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise ProfileError(file, field, first["msg"]) from None
    if profile.heap_share > MAX_HEAP_SHARE + 1e-9:
        raise ProfileError(file, "block_cache_fraction + memstore_fraction",
                           f"at most {MAX_HEAP_SHARE:.2f} of the heap (HBase refuses to start "
                           f"above it), got {profile.heap_share:.2f}")
    return profile


def load_profile(path: str | Path) -> NodeProfile:
    """Read and validate one profile YAML file; log its warnings."""
    path = Path(path)
    try:
        data = parse_yaml(read_text(path, MAX_YAML_BYTES, "a profile file"), str(path)).data
    except BadInput as err:
        raise ProfileError(err.file, err.field, err.expected) from None
    profile = parse_profile(data, str(path))
    for warning in profile.warnings():
        log.warning("%s: %s", path, warning)
    return profile


def load_profiles(directory: str | Path | None = None,
                  names: Iterable[str] = PROFILES) -> dict[str, NodeProfile]:
    """Every profile `names` from `directory` (default: the ones shipped with metctl), as
    <name>.yaml; a file whose `name` differs from its file name is bad input."""
    directory = Path(directory) if directory is not None else PROFILE_DIR
    out: dict[str, NodeProfile] = {}
    for name in names:
        path = directory / f"{name}.yaml"
        profile = load_profile(path)
        if profile.name != name:
            raise ProfileError(str(path), "name", f"{name!r} (the file name), got "
                                                  f"{profile.name!r}")
        out[name] = profile
    return out


@lru_cache(maxsize=1)
def shipped_profiles() -> dict[str, NodeProfile]:
    """The profiles shipped in this package (read once)."""
    return load_profiles()


def _resolve(profile: NodeProfile | str) -> NodeProfile:
    if isinstance(profile, NodeProfile):
        return profile
    try:
        return shipped_profiles()[profile]
    except KeyError:
        raise ProfileError("<profiles>", "name", f"one of {', '.join(PROFILES)}, got "
                                                 f"{profile!r}") from None


def render_hbase_settings(profile: NodeProfile | str) -> dict[str, str]:
    """The hbase-site.xml properties a RegionServer with this profile restarts with (a
    profile or the name of a shipped one). Block size is not among them: see
    `render_block_size`."""
    p = _resolve(profile)
    settings = {
        "hfile.block.cache.size": _fraction(p.block_cache_fraction),
        "hbase.regionserver.global.memstore.size": _fraction(p.memstore_fraction),
        # always rendered: a node restarting into a profile without it must not keep it
        "hbase.rs.prefetchblocksonopen": "true" if p.prefetch_on_open else "false",
    }
    settings.update(p.extra_settings)
    return settings


def render_block_size(profile: NodeProfile | str) -> dict[str, str]:
    """The column-family attribute for this profile, as HBase names it (BLOCKSIZE in bytes)."""
    return {"BLOCKSIZE": str(_resolve(profile).block_size_kb * 1024)}


def recommend_block_sizes(table_profiles: Mapping[str, Iterable[str]],
                          profiles: Mapping[str, NodeProfile] | None = None
                          ) -> dict[str, int | None]:
    """Per table, the block size (KiB) its serving profiles agree on, or None when the table's
    partitions sit under profiles with different block sizes (a column family has one BLOCKSIZE
    for every region, so no single value fits). `table_profiles`: table -> profiles of the
    nodes serving its partitions (e.g. from a plan's assignment)."""
    profiles = profiles if profiles is not None else shipped_profiles()
    out: dict[str, int | None] = {}
    for table, names in table_profiles.items():
        sizes = {profiles[n].block_size_kb for n in names if n in profiles}
        out[table] = sizes.pop() if len(sizes) == 1 else None
    return out


def plan_table_profiles(snapshot: ClusterSnapshot, plan: Plan) -> dict[str, set[str]]:
    """table -> profiles of the nodes that serve its partitions after `plan` (the input of
    `recommend_block_sizes`)."""
    table_of = {p.id: p.table for p in snapshot.partitions}
    out: dict[str, set[str]] = {}
    for node in plan.assignment:
        for pid in node.partitions:
            out.setdefault(table_of.get(pid, "?"), set()).add(node.profile)
    return out


__all__ = ["ProfileError", "ProfileOverride", "with_overrides", "plan_table_profiles", "NodeProfile", "MAX_HEAP_SHARE", "WARN_HEAP_SHARE", "PROFILE_DIR",
           "parse_profile", "load_profile", "load_profiles", "shipped_profiles",
           "render_hbase_settings", "render_block_size", "recommend_block_sizes"]
