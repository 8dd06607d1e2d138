"""protocol: talking to GUIs and servers. GTP v2 (gtp, its syntax in gtp_syntax, its streaming
analysis commands in gtp_analyze, its game setup in gtp_setup, GoGui's analyze and graphics
commands in gtp_gogui) and KataGo's JSON analysis engine (json_analysis, KaTrain's).

Layer 7: may import gammago.engine and below."""
