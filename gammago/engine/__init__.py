"""engine: deciding a move. The engine (engine.Engine: the game and the search of a move), its
settings (settings.EngineConfig), and Engine's bases: which search, net and gamma tables play
each board size (search_choice), pondering (pondering), the clocks (clock), the end of a game:
pass, resign, clean-up, dead stones (game_end), self-play's root noise, Gumbel and forced
playouts (selfplay_root); then the no-search players, self-play, simulation balancing's labels
and run, a game's review (`gammago review`: review, review_output), and `gammago bench`.

Layer 6: may import gammago.search and below."""
