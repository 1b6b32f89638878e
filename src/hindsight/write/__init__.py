"""The write path: turns and records into drafts (ingest), what to keep (decide), export and
import (transfer), and the one door every write goes through (door)."""
