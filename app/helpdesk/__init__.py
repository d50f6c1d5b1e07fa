"""The helpdesk surface: Gorgias tickets as conversations, its sidebar, its macros."""
