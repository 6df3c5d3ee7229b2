"""gelucheck's accuracy matrix as pytest tests, shipped with the package so that any project
can run it against its own callable:

    pytest --pyargs gelucheck.suite --gelucheck-impl mypkg.act:gelu --gelucheck-function gelu
"""
