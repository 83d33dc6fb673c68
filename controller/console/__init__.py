"""The web console `metctl run` serves at `/` beside the `/v1` API: the cluster now, the
controller now, the operator's controls (docs/console.md). Its page and script ship in this
package (static/); it reads and changes everything through `/v1`."""
