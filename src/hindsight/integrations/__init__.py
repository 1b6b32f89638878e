"""Adapters that plug hindsight into agent frameworks, each in its own module:
``langgraph``, ``openai_agents``, ``llama_index``, ``autogen`` and ``crewai``. Each works
over the embedded :class:`hindsight.Hindsight` or a sync :class:`hindsight.Client` and
needs its extra (``pip install '.[langgraph]'``, ...); crewAI, which pins
``mcp<2``, is installed beside the core package instead (``pip install .
'crewai>=1,<2'``)."""
