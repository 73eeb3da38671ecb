@echo off
rem readingroom installer for Windows (per user, no administrator rights needed).
rem Double-click this file, or run it from a console with the parameters of install.ps1:
rem     install.cmd -NotificationFiled 2026-08-19 -Hosts codex,claude-desktop
rem     install.cmd -WhatIf
rem It starts Windows PowerShell with -ExecutionPolicy Bypass for this one run only; no
rem setting is changed. Started without arguments (a double-click) it waits for a key at the
rem end so that the window does not vanish; set READINGROOM_NO_PAUSE=1 to skip the wait.
rem The exit code is install.ps1's: 0 done, 1 a step failed, 2 bad arguments.
setlocal
powershell.exe -NoProfile -ExecutionPolicy Bypass -File "%~dp0install.ps1" %*
set "RR_EXIT=%ERRORLEVEL%"
if "%~1"=="" if not defined READINGROOM_NO_PAUSE pause
exit /b %RR_EXIT%
