"""The read path: a recall request, its channels, fusion and ranking, the recall cache."""
