@echo off
rem readingroom uninstaller for Windows. Double-click this file, or run it from a console
rem with the parameters of uninstall.ps1:
rem     uninstall.cmd                 remove host entries and the install folder, keep data
rem     uninstall.cmd -RemoveData     also delete the data folder (receipt ledger included)
rem     uninstall.cmd -WhatIf         show what would be removed
rem Started without arguments (a double-click) it waits for a key at the end so that the
rem window does not vanish; set READINGROOM_NO_PAUSE=1 to skip the wait. When this file is
rem the copy inside the install folder, that folder is removed after this window closes.
rem The exit code is uninstall.ps1's: 0 done, 1 a step failed, 2 bad arguments.
setlocal
powershell.exe -NoProfile -ExecutionPolicy Bypass -File "%~dp0uninstall.ps1" %*
set "RR_EXIT=%ERRORLEVEL%"
if "%~1"=="" if not defined READINGROOM_NO_PAUSE pause
exit /b %RR_EXIT%
