"""Reading text: time words and the names in it."""
