"""The torch probe: runs user code under torch and reports what really happened."""
