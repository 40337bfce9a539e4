"""Surface's internals: coordinate forms and argument checks (``geometry``), the log of
what was drawn (``drawlog``), antialiased shapes (``smooth``), cached text glyphs
(``glyphs``), and the drawing methods Surface gathers from its bases (``batch``,
``images``, ``text``)."""
