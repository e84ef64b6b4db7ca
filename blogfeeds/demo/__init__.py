"""``scrapy demo``: a little blogosphere served on loopback (:mod:`.blogosphere`) through the
local forward proxy the tests use too (:mod:`.web`)."""
