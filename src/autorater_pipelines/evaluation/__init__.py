"""What both evaluations share: JSON extraction from model text (more shared pieces join here).

AutoSxS (:mod:`autorater_pipelines.autosxs`) and Gecko (:mod:`autorater_pipelines.gecko`) both build on
this layer; nothing here imports either of them, or kfp.
"""
