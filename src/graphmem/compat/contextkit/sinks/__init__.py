"""ContextKit's change-log sinks (``graphmem.compat.contextkit.sinks.webhook.WebhookSink``)."""
