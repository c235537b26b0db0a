"""The labelled cases of `dream eval`, shipped inside the package as `dream.eval.cases_data`."""
