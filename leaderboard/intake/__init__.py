"""What is checked before an entry is accepted, beyond its own files (issue 27 item 9)."""
