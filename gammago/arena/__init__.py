"""arena: games between programs. The GTP subprocess client (gtp_process), one refereed game
(referee), `gammago match` and its record (match, match_record), statistics (stats), `gammago
compare` and its Bradley-Terry ratings (compare, ratings, rating_report), `gammago regress`.

Layer 8, the top: may import every layer."""
