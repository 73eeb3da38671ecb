"""ndl-mcp: the National Diet Library's NDL Search, through its SRU interface."""
