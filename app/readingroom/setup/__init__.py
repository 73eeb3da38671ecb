"""Installation support: the loopback fake SRU server, a raw stdio client and the self-test."""
