"""graphmem's servers: ``server.http`` (REST API with OpenAPI, SSE events, the web UI)."""
