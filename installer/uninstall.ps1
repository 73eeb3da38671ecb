<#
.SYNOPSIS
Removes readingroom: its entries in your AI assistants' configuration files, then its install
folder. Your data folder (receipt ledger, NDL notification record) is kept unless -RemoveData.

.DESCRIPTION
uninstall.ps1 first runs "readingroom setup --remove" from the installed folder, which takes
readingroom's own entries out of every host configuration it manages (with a timestamped
backup of each file it changes, as when installing). Only when that succeeds does it delete
the install folder. The data folder is kept: the receipt ledger is your record of what was
searched, and the NDL notification record saves you filing the date again. -RemoveData
deletes it too.

The installer copies this script into the install folder, so it can be run from there
(uninstall.cmd) after the downloaded release folder is gone. When it runs from inside the
folder it deletes, the folder itself disappears once this window closes.

.PARAMETER InstallDir
The install folder. Default: the folder this script is in when that is a readingroom install,
else %LOCALAPPDATA%\Programs\ReadingRoom.

.PARAMETER DataDir
The data folder, used only with -RemoveData. Default: the folder the installer recorded, else
%USERPROFILE%\ReadingRoom.

.PARAMETER RemoveData
Also delete the data folder, including the receipt ledger and the NDL notification record.

.EXAMPLE
.\uninstall.ps1

Removes the host entries and the install folder; keeps the data folder.

.EXAMPLE
.\uninstall.ps1 -RemoveData -WhatIf

Shows what would be removed, data folder included; changes nothing.

.NOTES
Exit codes: 0 done; 1 a step failed (for example readingroom setup --remove could not write a
host configuration; the install folder is then kept so that you can run it again); 2 bad
arguments. Works in Windows PowerShell 5.1 and PowerShell 7.
#>
[CmdletBinding(SupportsShouldProcess = $true, ConfirmImpact = 'Medium')]
param(
    [string]$InstallDir,
    [string]$DataDir,
    [switch]$RemoveData
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'

$ExitOk = 0
$ExitFailed = 1
$ExitUsage = 2
$AdminExe = 'readingroom.exe'
$InstallRecordName = 'readingroom-install.txt'
$NotificationFileName = 'NDL-API-NOTIFICATION.txt'

function Write-Step {
    param([string]$Message, [string]$Color = 'Gray')
    Write-Host $Message -ForegroundColor $Color
}

function Get-FullPath {
    param([string]$Path)
    $full = $ExecutionContext.SessionState.Path.GetUnresolvedProviderPathFromPSPath($Path)
    $root = [IO.Path]::GetPathRoot($full)
    if ($full.Length -gt $root.Length) {
        $full = $full.TrimEnd('\', '/')
    }
    return $full
}

function Test-SamePath {
    param([string]$A, [string]$B)
    return [string]::Equals($A.TrimEnd('\', '/'), $B.TrimEnd('\', '/'),
        [StringComparison]::OrdinalIgnoreCase)
}

function Test-InsidePath {
    param([string]$Path, [string]$Folder)
    if (Test-SamePath -A $Path -B $Folder) {
        return $true
    }
    return $Path.StartsWith($Folder.TrimEnd('\', '/') + '\', [StringComparison]::OrdinalIgnoreCase)
}

function Test-ProtectedFolder {
    # True for folders that must never be deleted wholesale.
    param([string]$Path)
    if (Test-SamePath -A $Path -B ([IO.Path]::GetPathRoot($Path))) {
        return $true
    }
    $protected = @($env:USERPROFILE, $env:APPDATA, $env:LOCALAPPDATA, $env:ProgramFiles,
        ${env:ProgramFiles(x86)}, $env:SystemRoot, $env:ProgramData, $env:TEMP)
    if ($env:LOCALAPPDATA) {
        $protected += Join-Path -Path $env:LOCALAPPDATA -ChildPath 'Programs'
    }
    if ($env:USERPROFILE) {
        foreach ($name in @('Desktop', 'Documents', 'Downloads', 'OneDrive')) {
            $protected += Join-Path -Path $env:USERPROFILE -ChildPath $name
        }
    }
    foreach ($folder in $protected) {
        if ($folder -and (Test-SamePath -A $Path -B $folder)) {
            return $true
        }
    }
    return $false
}

function Get-InstallRecordValue {
    param([string]$Folder, [string]$Key)
    $record = Join-Path -Path $Folder -ChildPath $InstallRecordName
    if (-not (Test-Path -LiteralPath $record -PathType Leaf)) {
        return $null
    }
    foreach ($line in [IO.File]::ReadAllLines($record)) {
        $cut = $line.IndexOf('=')
        if ($cut -gt 0 -and $line.Substring(0, $cut).Trim() -eq $Key) {
            $value = $line.Substring($cut + 1).Trim()
            if ($value) {
                return $value
            }
        }
    }
    return $null
}

function Test-DataFolder {
    # A folder setup made: empty, or holding the notification record or a JSONL ledger.
    param([string]$Path)
    $items = @(Get-ChildItem -LiteralPath $Path -Force)
    if ($items.Count -eq 0) {
        return $true
    }
    if (Test-Path -LiteralPath (Join-Path -Path $Path -ChildPath $NotificationFileName) -PathType Leaf) {
        return $true
    }
    return (@(Get-ChildItem -LiteralPath $Path -Filter '*.jsonl' -File).Count -gt 0)
}

function Get-ProcessFromFolder {
    param([string]$Folder)
    $prefix = $Folder.TrimEnd('\') + '\'
    try {
        return @(Get-CimInstance -ClassName Win32_Process -ErrorAction Stop | Where-Object {
                $_.ExecutablePath -and
                $_.ExecutablePath.StartsWith($prefix, [StringComparison]::OrdinalIgnoreCase)
            })
    }
    catch {
        Write-Verbose "Could not list running processes: $($_.Exception.Message)"
        return @()
    }
}

function Get-LauncherInFolder {
    # The cmd.exe that started this PowerShell when it is running a batch file from inside
    # $Folder (uninstall.cmd double-clicked in the install folder), else $null.
    param([string]$Folder)
    try {
        $self = Get-CimInstance -ClassName Win32_Process -Filter "ProcessId = $PID" -ErrorAction Stop
        $parent = Get-CimInstance -ClassName Win32_Process -Filter "ProcessId = $($self.ParentProcessId)" -ErrorAction Stop
    }
    catch {
        Write-Verbose "Could not inspect the parent process: $($_.Exception.Message)"
        return $null
    }
    if ($null -eq $parent -or $parent.Name -ne 'cmd.exe' -or -not $parent.CommandLine) {
        return $null
    }
    if ($parent.CommandLine.IndexOf($Folder.TrimEnd('\') + '\', [StringComparison]::OrdinalIgnoreCase) -lt 0) {
        return $null
    }
    return $parent
}

function Register-FolderRemoval {
    # Remove $Folder from a hidden PowerShell once process $AfterProcessId has ended (0: at
    # once), retrying for up to 30 minutes while something still holds the folder open.
    param([string]$Folder, [int]$AfterProcessId)
    $literal = "'" + $Folder.Replace("'", "''") + "'"
    $command = @(
        "if ($AfterProcessId -gt 0) { Wait-Process -Id $AfterProcessId -ErrorAction SilentlyContinue }",
        '$deadline = (Get-Date).AddMinutes(30)',
        "while ((Test-Path -LiteralPath $literal) -and ((Get-Date) -lt `$deadline)) {",
        "    Remove-Item -LiteralPath $literal -Recurse -Force -ErrorAction SilentlyContinue",
        "    if (Test-Path -LiteralPath $literal) { Start-Sleep -Seconds 2 }",
        '}'
    ) -join "`n"
    $encoded = [Convert]::ToBase64String([Text.Encoding]::Unicode.GetBytes($command))
    $cleanup = @{
        FilePath         = (Get-Process -Id $PID).Path
        ArgumentList     = "-NoProfile -NonInteractive -ExecutionPolicy Bypass -EncodedCommand $encoded"
        WorkingDirectory = [IO.Path]::GetTempPath()
        WindowStyle      = 'Hidden'
    }
    Start-Process @cleanup
}

# --- 1. Where things are ---------------------------------------------------------------------

if ($InstallDir) {
    $installPath = Get-FullPath -Path $InstallDir
}
elseif (Test-Path -LiteralPath (Join-Path -Path $PSScriptRoot -ChildPath $AdminExe) -PathType Leaf) {
    $installPath = Get-FullPath -Path $PSScriptRoot
}
elseif ($env:LOCALAPPDATA) {
    $installPath = Join-Path -Path $env:LOCALAPPDATA -ChildPath 'Programs\ReadingRoom'
}
else {
    Write-Step -Message 'LOCALAPPDATA is not set; give -InstallDir.' -Color Red
    exit $ExitUsage
}
$adminPath = Join-Path -Path $installPath -ChildPath $AdminExe
$installed = Test-Path -LiteralPath $adminPath -PathType Leaf

if ((Test-Path -LiteralPath $installPath) -and -not $installed) {
    Write-Step -Message "$installPath holds no $AdminExe, so it is not a readingroom install; nothing was removed." -Color Red
    exit $ExitUsage
}
if (Test-ProtectedFolder -Path $installPath) {
    Write-Step -Message "Refusing to remove $installPath." -Color Red
    exit $ExitUsage
}

$dataPath = $null
if ($DataDir) {
    $dataPath = Get-FullPath -Path $DataDir
}
elseif ($installed) {
    $dataPath = Get-InstallRecordValue -Folder $installPath -Key 'data-dir'
}
if (-not $dataPath -and $env:USERPROFILE) {
    $dataPath = Join-Path -Path $env:USERPROFILE -ChildPath 'ReadingRoom'
}

# Checked before anything is changed: -RemoveData deletes only a folder readingroom made.
if ($RemoveData -and $dataPath -and (Test-Path -LiteralPath $dataPath)) {
    if ((Test-ProtectedFolder -Path $dataPath) -or (Test-InsidePath -Path $installPath -Folder $dataPath) -or
        -not (Test-DataFolder -Path $dataPath)) {
        Write-Step -Message ("Refusing to delete $dataPath`: it does not look like a readingroom data " +
            "folder (no $NotificationFileName, no .jsonl ledger). Nothing was removed; delete it " +
            "yourself if you mean to.") -Color Red
        exit $ExitUsage
    }
}

Write-Step -Message 'readingroom uninstaller' -Color Cyan
Write-Step -Message "  install folder: $installPath"
Write-Step -Message "  data folder:    $dataPath"

# --- 2. Host entries, while readingroom.exe still exists --------------------------------------

if ($installed) {
    $running = @(Get-ProcessFromFolder -Folder $installPath)
    if ($running.Count -gt 0 -and -not $WhatIfPreference) {
        $names = ($running | ForEach-Object { $_.Name } | Sort-Object -Unique) -join ', '
        Write-Step -Message "Programs from $installPath are running ($names). Quit Claude Desktop, Codex and any other assistant using readingroom, then run the uninstaller again." -Color Red
        exit $ExitFailed
    }
    $setupArgs = @('setup', '--remove', '--install-dir', $installPath)
    if ($PSCmdlet.ShouldProcess('your AI assistants'' configuration files', "Remove readingroom's entries: $adminPath $($setupArgs -join ' ')")) {
        try {
            & $adminPath @setupArgs
            $setupExit = $LASTEXITCODE
        }
        catch {
            Write-Step -Message "Could not start $adminPath ($($_.Exception.Message)); nothing was removed." -Color Red
            exit $ExitFailed
        }
        if ($setupExit -ne 0) {
            Write-Step -Message ("readingroom setup --remove failed (exit $setupExit). The install folder " +
                "was kept so that you can fix what it names and run the uninstaller again.") -Color Red
            exit $setupExit
        }
    }
    elseif (-not $WhatIfPreference) {
        Write-Step -Message 'Host entries kept, so the install folder is kept too (the entries point into it).'
        exit $ExitOk
    }
}
else {
    Write-Step -Message "No readingroom install at $installPath; no host entries to remove from here." -Color Yellow
}

# --- 3. The install folder -------------------------------------------------------------------

if ((Test-Path -LiteralPath $installPath) -and
    $PSCmdlet.ShouldProcess($installPath, 'Remove the install folder')) {
    # Our own working directory would keep the folder open.
    [Environment]::CurrentDirectory = [IO.Path]::GetTempPath()
    $launcher = Get-LauncherInFolder -Folder $installPath
    if ($launcher) {
        # uninstall.cmd in this very folder started us: cmd.exe still has to read its last lines
        # and keeps the folder open as its working directory, so remove it once that has ended.
        Register-FolderRemoval -Folder $installPath -AfterProcessId $launcher.ProcessId
        Write-Step -Message "$installPath will be removed when this window closes." -Color Green
    }
    else {
        try {
            Remove-Item -LiteralPath $installPath -Recurse -Force -Confirm:$false
        }
        catch {
            Write-Verbose "Remove-Item: $($_.Exception.Message)"
        }
        if (Test-Path -LiteralPath $installPath) {
            $left = @(Get-ChildItem -LiteralPath $installPath -Recurse -Force -File)
            if ($left.Count -gt 0) {
                Write-Step -Message "Could not remove everything in $installPath ($($left.Count) files are in use). Quit the assistants and run the uninstaller again." -Color Red
                exit $ExitFailed
            }
            # Only empty folders are left, held open as some window's working directory.
            Register-FolderRemoval -Folder $installPath -AfterProcessId 0
            Write-Step -Message "The empty folder $installPath will disappear once nothing holds it open."
        }
        else {
            Write-Step -Message "Removed $installPath." -Color Green
        }
    }
    $parent = Split-Path -Path $installPath -Parent
    $leaf = Split-Path -Path $installPath -Leaf
    # Leftovers of an interrupted update (-like, not -Filter: the file system's own wildcard
    # matching also looks at 8.3 short names).
    Get-ChildItem -LiteralPath $parent -Directory -ErrorAction SilentlyContinue |
        Where-Object { $_.Name -like "$leaf.old-*" -or $_.Name -like "$leaf.new-*" } |
        Remove-Item -Recurse -Force -Confirm:$false -ErrorAction SilentlyContinue
}

# --- 4. The data folder ----------------------------------------------------------------------

if (-not $dataPath -or -not (Test-Path -LiteralPath $dataPath)) {
    if ($RemoveData) {
        Write-Step -Message "No data folder at $dataPath."
    }
}
elseif (-not $RemoveData) {
    Write-Step -Message "Kept your data folder $dataPath (receipt ledger, NDL notification record). Delete it yourself, or run the uninstaller with -RemoveData."
}
elseif ($PSCmdlet.ShouldProcess($dataPath, 'Remove the data folder (receipt ledger, NDL notification record)')) {
    try {
        Remove-Item -LiteralPath $dataPath -Recurse -Force -Confirm:$false
    }
    catch {
        Write-Step -Message "Could not remove $dataPath ($($_.Exception.Message))." -Color Red
        exit $ExitFailed
    }
    Write-Step -Message "Removed $dataPath." -Color Green
}

if (-not $WhatIfPreference) {
    Write-Step -Message 'readingroom is uninstalled. Restart your assistants so they forget it.' -Color Green
}
exit $ExitOk
