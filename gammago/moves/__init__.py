"""moves: what a move is worth before any search. Move features (features: 3x3 pattern,
diamond, tactics, distances), gamma tables (gammas), Coulom's MM (mm), `gammago train-mm` and
`gammago predict` (move-prediction figures of gammas and nets).

Layer 3: may import gammago.net, gammago.go and gammago.core."""
