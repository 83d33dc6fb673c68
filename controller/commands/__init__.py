"""One module per metctl subcommand, each exposing a click `command`."""
