"""Framework-independent parts of the Python layer: the engine holder,
process sets, handles and exceptions shared by kolo.torch and kolo.numpy."""
