"""tcp-baseline: real TCP traffic between the two sides of a Pair."""
