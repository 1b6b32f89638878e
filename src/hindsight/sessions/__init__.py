"""Sessions: working memory, a conversation's turns, and what is distilled from them."""
