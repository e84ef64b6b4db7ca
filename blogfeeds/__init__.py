"""blogfeeds: map the blogosphere through friend links and keep its feeds fresh."""

__version__ = "0.1.0"
