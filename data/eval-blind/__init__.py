"""The blind cases of `dream eval --blind`, shipped as `dream.eval.blind_data`; scored per category only."""
