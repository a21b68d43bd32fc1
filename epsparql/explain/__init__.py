"""What explains a query, below the commands that show it: the algebra as
a tree (:mod:`.algebra_tree`), the binarised rule graph (:mod:`.rule_graph`),
the drawing (:mod:`.drawing`) and the trace of a small stream
(:mod:`.trace`, :mod:`.trace_output`)."""
