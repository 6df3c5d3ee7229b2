"""Reports of measurement results: JSON, terminal and Markdown tables, plots, comparisons."""
