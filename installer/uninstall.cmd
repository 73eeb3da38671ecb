@echo off
rem readingroom uninstaller for Windows. Double-click this file, or run it from a console
rem with the parameters of uninstall.ps1:
rem     uninstall.cmd                 remove host entries and the install folder, keep data
rem     uninstall.cmd -RemoveData     also delete the data folder (receipt ledger included)
rem     uninstall.cmd -WhatIf         show what would be removed
rem Started without arguments (a double-click) it waits for a key at the end so that the
rem window does not vanish; set READINGROOM_NO_PAUSE=1 to skip the wait.
rem The call, the pause and the exit share one line on purpose: uninstall.ps1 may delete the
rem folder holding this file, and cmd.exe reads a batch file line by line.
setlocal
powershell.exe -NoProfile -ExecutionPolicy Bypass -File "%~dp0uninstall.ps1" %* & (if "%~1"=="" if not defined READINGROOM_NO_PAUSE pause) & exit /b
