"""The check of an uploaded bot version and its qualification games: what makes a version active
(or rejected, or held when the machine could not check it)."""
