"""protocol: talking to GUIs and servers. GTP v2 (gtp, its syntax in gtp_syntax, its streaming
analysis commands in gtp_analyze, its game setup in gtp_setup, GoGui's analyze and graphics
commands in gtp_gogui) and KataGo's JSON analysis engine (KaTrain's: the command, its queue
and workers in json_analysis, a query read and checked in json_query, the answers built in
json_answer).

Layer 7: may import gammago.engine and below."""
