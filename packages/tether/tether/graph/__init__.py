"""The loop assembled: the nodes (tether.nodes) wired with the routes (tether.decisions).

Importing this package compiles nothing; :func:`tether.graph.builder.build_graph` does.
"""
