"""go: the game. The C board (strings, liberties, Zobrist hash, superko, area count), the one
tactical reader, the rules (KataGo's rule sets, parity komi), scoring (dead stones, seki,
territory), handicap points, SGF records in and out.

Layer 1: may import gammago.core."""
