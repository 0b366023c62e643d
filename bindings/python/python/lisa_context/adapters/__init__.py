"""Adapters that put lisa-context's section into the prompt of an agent
framework, through the framework's own extension point.

Each adapter is one module that imports its framework when it is imported:
import it only where that framework is installed.

- `lisa_context.adapters.deepagents`: `LisaContextMiddleware`, a LangChain
  agent middleware for `deepagents.create_deep_agent` (or
  `langchain.agents.create_agent`).
- `lisa_context.adapters.pydantic_ai`: `LisaContext`, a pydantic-ai
  capability for `pydantic_ai.Agent(capabilities=[...])`.

Both keep the section of one working directory, check its fingerprint
before every model request and rebuild it only when the fingerprint moves,
and can append on-access instructions (`Loader.access`) to the result of a
tool that touched a path. What each framework's extension point can and
cannot do is in `bindings/python/ADAPTERS.md`.
"""
