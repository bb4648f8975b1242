"""The agent loop as a LangGraph StateGraph: state, decisions, routing, and the builder."""
