"""Property-based fuzz tests of every parser of user text, each input under a time bound."""
