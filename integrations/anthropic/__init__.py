"""Anthropic: Claude through the Messages API (:mod:`.messages`, on the real SDK), and a
local sandbox that speaks the Messages API's wire format (:mod:`.sandbox`)."""
