"""The emulator's request handling, one module per verb; `dispatch.Handlers` routes a request to them."""
