"""What every route of the daemon's HTTP API gets before its handler runs (controller/api_guard.py):
bounded JSON, one-line 400s for malformed requests, separate rate budgets for operators and
anonymous readers, the Host check against DNS rebinding, TLS, and a 401 that names no path.
A real aiohttp server on loopback (tests/fixtures/api.py), real HTTP."""
from __future__ import annotations

import io
import json
import logging
import socket
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from controller.logs import setup_logging
from controller.telemetry import TelemetrySettings


def raw_request(base: str, data: bytes) -> tuple[int, bytes]:
    """Send `data` as it is (bytes no HTTP library would send) and read the whole answer."""
    host, port = base.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(data)
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    status = int(answer.split(b" ", 2)[1])
    return status, answer.split(b"\r\n\r\n", 1)[1]


@pytest.fixture
def json_log():
    """metctl's log as JSON lines in a buffer (the daemon's stderr when not on a terminal)."""
    stream = io.StringIO()
    setup_logging(TelemetrySettings(log_format="json"), stream)
    yield stream
    setup_logging(TelemetrySettings(), io.StringIO())


def test_deep_json_body_is_400_naming_the_nesting_not_a_recursion_error(api_server):
    """Issue 24 item 7: 60 KB of nested arrays with a valid token gave 500 RecursionError."""
    served = api_server()
    body = b"[" * 30000 + b"]" * 30000
    r = requests.post(served.base + "/v1/pause", data=body, headers=served.auth, timeout=10)
    assert r.status_code == 400
    error = r.json()["error"]
    assert "nested at most 100 levels" in error and "Recursion" not in error
    assert served.store.state.pause is None


@pytest.mark.parametrize("request_bytes,expected", [
    # a non-ASCII Authorization header (Latin-1 and UTF-8 bytes): not the token
    (b"POST /v1/resume HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \xe9\xe8\r\n"
     b"Content-Length: 0\r\nConnection: close\r\n\r\n", 401),
    (b"POST /v1/resume HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \xc3\xa9t\xc3\xa9"
     b"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", 401),
    # a limit that is a digit to str.isdigit but not to int(), and one of 5,000 digits
    (b"GET /v1/decisions?limit=%C2%B2 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
     400),
    (b"GET /v1/decisions?limit=" + b"9" * 5000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
     b"Connection: close\r\n\r\n", 400),
    (b"GET /v1/decisions?limit=0x10 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
     400),
    # a body that is not UTF-8, and JSON with a 5,000-digit number
    (b"POST /v1/pause HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer the-test-token\r\n"
     b"Content-Length: 4\r\nConnection: close\r\n\r\n\xff\xfe{}", 400),
    (b"POST /v1/pause HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer the-test-token\r\n"
     b"Content-Length: 5010\r\nConnection: close\r\n\r\n{\"for_s\": " + b"9" * 4999 + b"}",
     400),
])
def test_malformed_requests_are_400_or_401_one_line_without_python_error_text(
        api_server, json_log, capfd, request_bytes, expected):
    """Issue 24 item 20: a non-ASCII Authorization header, `limit=%C2%B2` or a 5,000-digit limit
    gave 500 with Python error text, and tracebacks on stderr."""
    served = api_server()
    status, body = raw_request(served.base, request_bytes)
    assert status == expected, body
    error = json.loads(body)["error"]
    assert "\n" not in error
    for python in ("Error:", "Traceback", "invalid literal", "codec", "ValueError"):
        assert python not in error
    # the server's log stays JSON lines; nothing else reached stderr
    for line in json_log.getvalue().splitlines():
        json.loads(line)
    assert "Traceback" not in capfd.readouterr().err
    assert served.store.state.pause is None


def test_an_anonymous_flood_does_not_lock_out_the_operator(api_server):
    """Issue 24 item 18: one rate budget checked before the token, so 3,000 anonymous status
    calls made `metctl resume` wait behind them. Operators have a budget of their own."""
    served = api_server(max_requests_per_s=5)
    anonymous_done = []
    lock = threading.Lock()

    def anonymous(_):
        code = requests.get(served.base + "/v1/status", timeout=60).status_code
        with lock:
            anonymous_done.append(code)

    flood = 60  # at 5 a second the last of them is booked 11 s out
    with ThreadPoolExecutor(flood) as pool:
        futures = [pool.submit(anonymous, i) for i in range(flood)]
        # wait until the anonymous budget is spent (the server has booked the flood)
        from tests.fixtures.poll import poll
        poll(lambda: served.server.guard.anonymous.tokens < -20, 30, "the flood to be booked")
        r = requests.post(served.base + "/v1/pause", json={"reason": "x"}, headers=served.auth,
                          timeout=30)
        with lock:
            served_before_operator = len(anonymous_done)
        assert r.status_code == 200 and served.store.state.pause is not None
        # the operator was answered while most of the flood still waited its turn
        assert served_before_operator < flood - 20
        for f in futures:
            f.result()
    assert set(anonymous_done) <= {200, 429}


@pytest.mark.parametrize("host,allowed", [
    ("127.0.0.1", True), ("127.0.0.1:9465", True), ("localhost", True), ("localhost:1", True),
    ("[::1]:9465", True), ("ops.example.org", True),
    ("attacker.example", False), ("attacker.example:9465", False), ("127.0.0.1.nip.io", False),
])
def test_host_header_must_name_this_api_not_a_rebound_name(api_server, host, allowed):
    """Issue 24, network exposure: DNS rebinding read the open status through a page whose name
    was made to resolve to 127.0.0.1; the Host header is checked against the bound address, the
    loopback names and control.allowed_hosts."""
    served = api_server(allowed_hosts=["ops.example.org"])
    for method, path in (("GET", "/v1/status"), ("GET", "/v1/nope"), ("POST", "/v1/plan")):
        r = requests.request(method, served.base + path, headers={"Host": host}, timeout=10)
        if allowed:
            assert r.status_code != 421, (method, path)
        else:
            assert r.status_code == 421, (method, path)
            assert "control.allowed_hosts" in r.json()["error"]
            assert "identity" not in r.text


def test_the_401_body_does_not_name_the_token_files_path(api_server):
    """Issue 24, network exposure: the 401 body named the token file's path."""
    served = api_server()
    r = requests.post(served.base + "/v1/resume", timeout=10)
    assert r.status_code == 401
    assert "bearer token" in r.json()["error"]
    assert str(served.token_file) not in r.text and served.token_file.name not in r.text


@pytest.fixture
def certificate(tmp_path):
    """A self-signed certificate for 127.0.0.1 and its key, made by the openssl command."""
    cert, key = tmp_path / "api.crt", tmp_path / "api.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    key.chmod(0o600)
    return cert, key


def test_tls_with_a_certificate_and_key(api_server, certificate, capsys):
    """Issue 24, network exposure: the API offers TLS (control.tls_cert_file, tls_key_file)."""
    from controller.cli import main

    cert, key = certificate
    served = api_server(tls_cert_file=str(cert), tls_key_file=str(key))
    assert served.base.startswith("https://")
    r = requests.get(served.base + "/v1/status", verify=str(cert), timeout=10)
    assert r.status_code == 200 and r.json()["paused"] is False
    with pytest.raises(requests.exceptions.SSLError):
        requests.get(served.base + "/v1/status", timeout=10)  # not a trusted certificate
    # plain HTTP to the TLS port is no request at all
    with pytest.raises(requests.exceptions.ConnectionError):
        requests.get(served.base.replace("https://", "http://") + "/v1/status", timeout=10)
    # the CLI verifies the server with control.tls_ca_file
    config = served.token_file.with_name("tls.yaml")
    config.write_text(f"cluster: demo\ndatastore: {{driver: sim}}\ncontrol: {{tls_ca_file: '{cert}'}}\n")
    assert main(["pause", "--config", str(config), "--api", served.base,
                 "--token-file", str(served.token_file)]) == 0
    assert served.store.state.pause is not None
    assert "paused by" in capsys.readouterr().out


def test_binding_beyond_loopback_without_tls_warns_loudly(api_server, json_log, certificate):
    """Issue 24, network exposure: `--api 0.0.0.0:...` started without a warning."""
    api_server(api_address="0.0.0.0:0")
    warnings = [json.loads(x) for x in json_log.getvalue().splitlines()]
    loud = [x for x in warnings if x.get("event") == "api.exposed_without_tls"]
    assert loud and loud[0]["level"] == "warning"
    assert "0.0.0.0" in loud[0]["msg"] and "tls_cert_file" in loud[0]["msg"]
    # loopback, or TLS beyond it: no such warning
    json_log.truncate(0)
    json_log.seek(0)
    cert, key = certificate
    api_server(api_address="127.0.0.1:0")
    api_server(api_address="0.0.0.0:0", tls_cert_file=str(cert), tls_key_file=str(key))
    assert "api.exposed_without_tls" not in json_log.getvalue()


def test_tls_settings_come_in_pairs_and_an_unreadable_certificate_is_one_line(
        api_server, tmp_path, capsys):
    from controller.cli import main
    from controller.errors import BadInput

    config = tmp_path / "c.yaml"
    config.write_text("cluster: demo\ndatastore: {driver: sim}\ncontrol: {tls_cert_file: /etc/metctl/api.crt}\n")
    assert main(["validate", str(config)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "tls_key_file" in err, err
    with pytest.raises(BadInput, match="control.tls_cert_file"):
        api_server(tls_cert_file=str(tmp_path / "x.crt"), tls_key_file=str(tmp_path / "x.key"))


def test_open_reads_do_not_show_what_operators_typed(api_server):
    """Issue 24 item 21: the pause reason and `by` were returned unmasked by the open
    GET /v1/status (and the hold words quoting them by /v1/decisions)."""
    from controller.control import LiveStatus

    from tests.fixtures.snapshots import make_snapshot, node

    live = LiveStatus()
    live.last_snapshot = make_snapshot([node("rs1,16020")])  # protect checks the node exists
    served = api_server(live=live)
    typed = {"reason": "rotating the ldap password hunter2", "by": "ana@bastion-7"}
    assert requests.post(served.base + "/v1/pause", json=typed, headers=served.auth,
                         timeout=10).status_code == 200
    requests.put(served.base + "/v1/nodes/rs1,16020/protection",
                 json={"reason": "disk swap ticket 4711", "by": "joe@ops"}, headers=served.auth,
                 timeout=10)
    requests.put(served.base + "/v1/size", json={"min": 3, "max": 3, "by": "joe@ops"},
                 headers=served.auth, timeout=10)
    # the loop held a decision with the pause's words
    from controller.loop import HoldCause
    live.on_hold(0.0, HoldCause.PAUSED, "paused by ana@bastion-7 until resumed: rotating the "
                 "ldap password hunter2")
    secrets = ("hunter2", "bastion", "4711", "joe@ops")
    for path in ("/v1/status", "/v1/decisions"):
        anonymous = requests.get(served.base + path, timeout=10)
        assert anonymous.status_code == 200
        assert not [s for s in secrets if s in anonymous.text], anonymous.text
        # an operator sees them in full
        operator = requests.get(served.base + path, headers=served.auth, timeout=10)
        assert all(s in operator.text for s in (secrets if path == "/v1/status" else secrets[:2]))
    status = requests.get(served.base + "/v1/status", timeout=10).json()
    assert status["paused"] is True and status["pause"]["reason"] == "***"
    assert status["pinned"]["min"] == 3 and "rs1,16020" in status["protected"]
