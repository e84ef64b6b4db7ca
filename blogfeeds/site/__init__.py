"""The static site of the stored blogosphere (``scrapy export site DIR``) and the entries export
(``scrapy export entries``): :mod:`.data` reads and joins the database, :mod:`.build` writes the
pages (Jinja2 templates in ``templates/``, style sheet, scripts and the vendored graph library in
``assets/``), :mod:`.feeds` the river's Atom and JSON Feed. See docs/site.md."""
