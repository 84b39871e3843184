"""The balance lab: simulations, statistics, reports and plots."""
