"""engine: deciding a move. The engine (engine.Engine: the game, which search plays), its
settings (settings.EngineConfig), the clock, the end of a game (pass, resign, clean-up), the
no-search players, self-play, simulation balancing's labels and run, and `gammago bench`.

Layer 6: may import gammago.search and below."""
