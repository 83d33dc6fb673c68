"""The console's routes on the API server: the page (`/`), its packaged assets
(`/console/<file>`), and `GET /v1/cluster` (controller.console.view's document plus the plan in
flight's steps).

The page and assets hold no data, so they load without a token (the page then asks for one).
`/v1/cluster` needs the token unless `control.console_read_without_token` (a read-only view
for anyone who can reach the address) — or always when `control.read_requires_token`.
`/console/session` tells the page which (booleans only), before it reads anything.
"""
from __future__ import annotations

from importlib import resources
from typing import Any

from controller.api_guard import OPERATOR
from aiohttp import web

# the only files served, with their types: nothing else under the package is reachable
ASSETS = {"console.js": "text/javascript", "console.css": "text/css",
          "favicon.svg": "image/svg+xml"}


def _asset(name: str) -> bytes:
    return resources.files("controller.console").joinpath("static", name).read_bytes()


def add_console_routes(view: Any) -> Any:
    """A route adder for controller.api.ApiServer (`routes=`) serving the console of `view`
    (a controller.console.view.ClusterView)."""
    def add(app: Any, server: Any) -> None:

        page = _asset("index.html")
        assets = {name: (_asset(name), kind) for name, kind in ASSETS.items()}

        async def index(request: web.Request) -> Any:
            return web.Response(body=page, content_type="text/html", charset="utf-8",
                                headers={"Cache-Control": "no-store"})

        async def asset(request: web.Request) -> Any:
            found = assets.get(request.match_info["name"])
            if found is None:
                raise web.HTTPNotFound(reason="no such console asset")
            return web.Response(body=found[0], content_type=found[1],
                                headers={"Cache-Control": "no-cache"})

        async def cluster(request: web.Request) -> Any:
            if not server.settings.console_read_without_token and not bool(request.get(OPERATOR)):
                # (with read_requires_token the common middleware has refused it already)
                return server._error(401, "a valid bearer token is required to read the "
                                     "console's view (or set control.console_read_without_token)")
            steps = server.live.copy().get("plan_steps") or []
            doc = view.document(steps)
            doc["plan_steps"] = steps[:500]
            doc["plan_steps_total"] = len(steps)
            doc["can_change"] = bool(request.get(OPERATOR))
            # a read-only view does not show the free text operators typed (protection reasons)
            return server._json(server._shown(request, doc))

        async def session(request: web.Request) -> Any:
            # what the page may show with the token it holds (booleans only: the page asks
            # before it reads, so a locked view makes no request that would be refused)
            authorized = bool(request.get(OPERATOR))
            return server._json({
                "authorized": authorized,
                "token_given": bool(request.headers.get("Authorization")),
                "may_read": authorized or (server.settings.console_read_without_token
                                           and not server.settings.read_requires_token)})

        app.router.add_get("/", index)
        app.router.add_get("/console/session", session)
        app.router.add_get("/console/{name}", asset)
        app.router.add_get("/v1/cluster", cluster)
    return add


__all__ = ["add_console_routes", "ASSETS"]
