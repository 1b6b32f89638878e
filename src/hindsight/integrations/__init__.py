"""Adapters that plug hindsight into agent frameworks, each in its own module:
``langgraph``, ``openai_agents``, ``llama_index`` and ``autogen``. Each needs its extra
(``pip install '.[langgraph]'``, ...) and works over the embedded
:class:`hindsight.Hindsight` or a sync :class:`hindsight.Client`."""
