"""host-health: passive hardware error counters over a short window."""
