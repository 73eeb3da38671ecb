"""book-agent: a user's own book as a registered, versioned, verifiable book package."""
