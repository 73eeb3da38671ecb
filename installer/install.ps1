<#
.SYNOPSIS
Installs readingroom for the current user and registers its MCP servers with your AI
assistants (Codex, Claude Desktop, Claude Code, VS Code, Cursor, Gemini CLI).

.DESCRIPTION
install.ps1 copies the readingroom bundle (a folder of executables: readingroom.exe,
ndl-mcp.exe and their _internal folder) to a per-user folder. No administrator rights are
needed and nothing is written to the registry. It then runs "readingroom setup", which edits
the assistants' configuration files (JSON and TOML) safely: it touches only readingroom's own
entries, keeps a timestamped backup of every file it changes, and finishes with a self-test.
PowerShell itself never reads or writes JSON or TOML here, because Windows PowerShell 5.1 is
unreliable at both.

ndl-mcp searches NDL Search, run by the National Diet Library of Japan (NDL). Section 17 of
the NDL's API terms of use asks everyone who uses the API continuously to tell the library who
they are and how they use it, through a web form, whether or not a formal application is
required of them. ndl-mcp is registered only once the date you filed that notification is
recorded. Give it with -NotificationFiled. Run interactively without it (and with no date
recorded yet), the installer shows the form's address, offers to open it, and asks for the
date; press Enter to install without ndl-mcp for now.

cinii-mcp searches CiNii Research, which asks for a CiNii Web API application id. Run
interactively, the installer asks for it (hidden as you type; press Enter to skip) and stores it
in the Windows Credential Manager through "readingroom secrets set CINII_APPID": it is never
written into a file, a host configuration or a command line. cinii-mcp is registered either
way; without an id its tools answer NOT_CONFIGURED until one is stored.

Run the installer again at any time to update: the install folder is replaced and the host
entries are rewritten in place.

.PARAMETER NotificationFiled
The date you filed the NDL API usage notification, as yyyy-MM-dd (for example 2026-08-19).
It must be a real date and not in the future; it is checked before anything is copied, and
recorded in the data folder's NDL-API-NOTIFICATION.txt. Without it (and with no date recorded
earlier) ndl-mcp is not registered with any host.

.PARAMETER InstallDir
Where to install. Default: %LOCALAPPDATA%\Programs\ReadingRoom. An existing readingroom
install there is replaced; a non-empty folder that is not a readingroom install is refused.

.PARAMETER Hosts
Which assistants to register with: codex, claude-desktop, claude-code, vscode, cursor, gemini.
Give several separated by commas. Default: let "readingroom setup" decide (the hosts it finds
installed).

.PARAMETER DataDir
Folder for your data: the receipt ledger and the NDL notification record. Default: the folder
recorded by the previous install, else setup's default %USERPROFILE%\ReadingRoom (outside
AppData on purpose: the Microsoft Store build of Claude Desktop redirects AppData writes).

.PARAMETER BundleDir
The bundle folder to install from. Default: ..\readingroom next to this installer folder (the
release zip), else ..\dist\readingroom (a source checkout after python build\freeze.py).

.PARAMETER NoSelfTest
Skip the self-test that "readingroom setup" runs after registering the servers.

.PARAMETER Books
A folder of your books (PDF, EPUB, Markdown). After registering the servers, setup runs
"book-agent add" over it (every level below), so your assistants can search the books when the
installer is done. Running the installer again adds only new and changed files.

.PARAMETER Zotero
Also add the PDF and EPUB attachments of your Zotero library (its default data folder,
%USERPROFILE%\Zotero), with each item's metadata. Zotero may stay open: its database is read
from a copy.

.EXAMPLE
.\install.ps1 -NotificationFiled 2026-08-19

Installs, records the notification date and registers ndl-mcp with the hosts setup finds.

.EXAMPLE
.\install.ps1 -Hosts codex,claude-desktop -WhatIf

Shows what would be copied and which setup command would run; changes nothing.

.EXAMPLE
.\install.ps1 -Books "$env:USERPROFILE\Documents\Papers" -Zotero

Installs, then registers every book under Documents\Papers and the Zotero library's PDFs and
EPUBs with book-agent.

.EXAMPLE
install.cmd -NotificationFiled 2026-08-19 -Hosts codex

The same from cmd.exe, or by double-clicking install.cmd (which then asks for the date).

.NOTES
Exit codes: 0 done; 1 a step failed (copy, a host configuration write, the self-test);
2 bad arguments, such as a malformed or future -NotificationFiled. After the copy the exit
code is the one "readingroom setup" returned.
Works in Windows PowerShell 5.1 and PowerShell 7. See docs\install.md for what the installer
changes on the machine.

.LINK
https://form2.ndl.go.jp/form/pub/ndl07/api
#>
[CmdletBinding(SupportsShouldProcess = $true, ConfirmImpact = 'Medium')]
param(
    [string]$NotificationFiled,
    [string]$InstallDir,
    [string[]]$Hosts,
    [string]$DataDir,
    [string]$BundleDir,
    [switch]$NoSelfTest,
    [string]$Books,
    [switch]$Zotero
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'

$ExitOk = 0
$ExitFailed = 1
$ExitUsage = 2
$NdlFormUrl = 'https://form2.ndl.go.jp/form/pub/ndl07/api'
$NotificationFileName = 'NDL-API-NOTIFICATION.txt'
$InstallRecordName = 'readingroom-install.txt'
$AdminExe = 'readingroom.exe'
# Optional secrets: asked for interactively, stored in the OS keyring by "readingroom secrets set".
$OptionalSecrets = @(
    [pscustomobject]@{
        Name     = 'CINII_APPID'
        Server   = 'cinii-mcp'
        What     = 'CiNii Web API application id'
        Register = 'https://support.nii.ac.jp/ja/cinii/api/developer'
    }
)

function Write-Step {
    param([string]$Message, [string]$Color = 'Gray')
    Write-Host $Message -ForegroundColor $Color
}

function Test-NotificationDate {
    # $null when $Text is a filed date (yyyy-MM-dd, a real date, not in the future); else why not.
    param([string]$Text)
    if ($Text -notmatch '^[0-9]{4}-[0-9]{2}-[0-9]{2}$') {
        return "'$Text' is not a date in the form yyyy-MM-dd (for example 2026-08-19)."
    }
    try {
        $parsed = [datetime]::ParseExact($Text, 'yyyy-MM-dd',
            [Globalization.CultureInfo]::InvariantCulture)
    }
    catch {
        return "'$Text' is not a real calendar date."
    }
    if ($parsed.Date -gt (Get-Date).Date) {
        return "$Text is in the future: give the date you actually filed the notification."
    }
    return $null
}

function Get-FullPath {
    # Absolute path without a trailing separator (relative paths resolve against the current
    # PowerShell location, not the process's working directory).
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
    # True when $Path is $Folder or lies below it.
    param([string]$Path, [string]$Folder)
    if (Test-SamePath -A $Path -B $Folder) {
        return $true
    }
    $prefix = $Folder.TrimEnd('\', '/') + '\'
    return $Path.StartsWith($prefix, [StringComparison]::OrdinalIgnoreCase)
}

function Get-BundleCandidate {
    # Where to look for the bundle (a folder holding readingroom.exe), in order.
    param([string]$Explicit)
    if ($Explicit) {
        return @(Get-FullPath -Path $Explicit)
    }
    $parent = Split-Path -Path $PSScriptRoot -Parent
    return @((Join-Path -Path $parent -ChildPath 'readingroom'),
        (Join-Path -Path $parent -ChildPath 'dist\readingroom'))
}

function Get-InstallRecordValue {
    # A value (key=value line) from the install record a previous run left, or $null.
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

function Get-RecordedNotificationDate {
    # The filing date an earlier "readingroom setup" recorded in <data>\NDL-API-NOTIFICATION.txt
    # (its "date filed: yyyy-MM-dd" line), or $null.
    param([string]$Folder)
    $record = Join-Path -Path $Folder -ChildPath $NotificationFileName
    if (-not (Test-Path -LiteralPath $record -PathType Leaf)) {
        return $null
    }
    $text = [IO.File]::ReadAllText($record)
    $match = [regex]::Match($text, '(?im)^date filed:[ \t]*([0-9]{4}-[0-9]{2}-[0-9]{2})[ \t]*\r?$')
    if ($match.Success -and ($null -eq (Test-NotificationDate -Text $match.Groups[1].Value))) {
        return $match.Groups[1].Value
    }
    return $null
}

function Test-Interactive {
    # Whether a person can answer prompts: an interactive session, not started with
    # -NonInteractive, and with input that is not redirected.
    if (-not [Environment]::UserInteractive) {
        return $false
    }
    foreach ($arg in [Environment]::GetCommandLineArgs()) {
        if ($arg -match '^[-/]noni') {
            return $false
        }
    }
    try {
        if ([Console]::IsInputRedirected) {
            return $false
        }
    }
    catch {
        Write-Verbose 'No console input to inspect; assuming an interactive session.'
    }
    return $true
}

function Read-NotificationDate {
    # Explain the NDL notification, offer to open the form, and ask for the filed date.
    # Returns the date, or $null when the person presses Enter (install without ndl-mcp).
    Write-Host ''
    Write-Step -Message 'Before ndl-mcp: the NDL asks to be notified of your use' -Color Cyan
    $explanation = @(
        'ndl-mcp searches NDL Search, run by the National Diet Library of Japan. Section 17',
        'of the NDL API terms of use asks everyone who uses the API continuously to report',
        'their contact details and the nature of their use through the library''s form,',
        'whether or not a formal application is required of them. Nothing technical stops',
        'you skipping it, so this installer asks: ndl-mcp is registered with your assistants',
        'once you have filed the notification and given its date here. The form:'
    )
    foreach ($line in $explanation) {
        Write-Step -Message "  $line"
    }
    Write-Step -Message "    $NdlFormUrl" -Color White
    $open = Read-Host -Prompt 'Open the form in your web browser now? [Y/n]'
    if ("$open".Trim() -notmatch '^(n|no)$') {
        try {
            Start-Process -FilePath $NdlFormUrl
        }
        catch {
            Write-Warning "Could not open a browser ($($_.Exception.Message)); open the address above yourself."
        }
    }
    while ($true) {
        $answer = Read-Host -Prompt ('Date you filed the notification (yyyy-MM-dd), ' +
            'or press Enter to install without ndl-mcp for now')
        $answer = "$answer".Trim()
        if ($answer -eq '') {
            return $null
        }
        $problem = Test-NotificationDate -Text $answer
        if ($null -eq $problem) {
            return $answer
        }
        Write-Step -Message "  $problem" -Color Yellow
    }
}

function ConvertFrom-SecureText {
    # The text of a SecureString (Read-Host -AsSecureString), for piping to "secrets set".
    param([Security.SecureString]$Secure)
    $bstr = [Runtime.InteropServices.Marshal]::SecureStringToBSTR($Secure)
    try {
        return [Runtime.InteropServices.Marshal]::PtrToStringBSTR($bstr)
    }
    finally {
        [Runtime.InteropServices.Marshal]::ZeroFreeBSTR($bstr)
    }
}

function Read-OptionalSecret {
    # Ask for each optional secret and store what is given with "readingroom secrets set NAME
    # --stdin" (the value goes through a pipe, never a command line or a file).
    param([string]$Admin)
    foreach ($secret in $OptionalSecrets) {
        if ([Environment]::GetEnvironmentVariable($secret.Name)) {
            Write-Step -Message "$($secret.Name) is set in this environment; not asking for it."
            continue
        }
        Write-Host ''
        Write-Step -Message "$($secret.Server) uses a $($secret.What) ($($secret.Name))" -Color Cyan
        Write-Step -Message "  Apply for one at $($secret.Register)"
        $secure = Read-Host -AsSecureString -Prompt ("$($secret.Name) (hidden; press Enter to skip " +
            'and keep any stored earlier)')
        $value = ConvertFrom-SecureText -Secure $secure
        if ([string]::IsNullOrWhiteSpace($value)) {
            Write-Step -Message ("  Skipped: $($secret.Server) is registered and answers NOT_CONFIGURED " +
                "until you store it with: readingroom secrets set $($secret.Name)")
            continue
        }
        $value | & $Admin secrets set $secret.Name --stdin | Out-Null
        if ($LASTEXITCODE -eq 0) {
            Write-Step -Message "  Stored $($secret.Name) in the Windows Credential Manager." -Color Green
        }
        else {
            Write-Step -Message ("  Could not store $($secret.Name) (exit $LASTEXITCODE); try again " +
                "with: readingroom secrets set $($secret.Name)") -Color Yellow
        }
        $value = $null
    }
}

function Get-ProcessFromFolder {
    # Processes (e.g. ndl-mcp.exe started by a host) running an executable inside $Folder.
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

function Test-ProtectedFolder {
    # True for folders an installer must never replace or delete wholesale.
    param([string]$Path)
    $root = [IO.Path]::GetPathRoot($Path)
    if (Test-SamePath -A $Path -B $root) {
        return $true
    }
    $protected = @($env:USERPROFILE, $env:APPDATA, $env:LOCALAPPDATA, $env:ProgramFiles,
        ${env:ProgramFiles(x86)}, $env:SystemRoot, $env:ProgramData, $env:TEMP)
    if ($env:LOCALAPPDATA) {
        $protected += Join-Path -Path $env:LOCALAPPDATA -ChildPath 'Programs'
    }
    if ($env:USERPROFILE) {
        foreach ($name in @('Desktop', 'Documents', 'Downloads')) {
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

function Move-Folder {
    # Rename a folder, retrying briefly: an antivirus scan of freshly copied files can hold them.
    param([string]$From, [string]$To)
    for ($attempt = 1; $attempt -le 5; $attempt++) {
        try {
            Move-Item -LiteralPath $From -Destination $To -Confirm:$false
            return
        }
        catch {
            if ($attempt -eq 5) {
                throw
            }
            Start-Sleep -Seconds 1
        }
    }
}

function Format-CommandLine {
    # A command line for display (not for execution).
    param([string]$Exe, [string[]]$Arguments)
    $parts = @("& '$Exe'")
    foreach ($argument in $Arguments) {
        if ($argument -match '[\s'']') {
            $parts += "'" + $argument.Replace("'", "''") + "'"
        }
        else {
            $parts += $argument
        }
    }
    return ($parts -join ' ')
}

# --- 1. Arguments, checked before anything is copied ----------------------------------------

$filedDate = $null
if (-not [string]::IsNullOrWhiteSpace($NotificationFiled)) {
    $problem = Test-NotificationDate -Text $NotificationFiled.Trim()
    if ($null -ne $problem) {
        Write-Step -Message "-NotificationFiled: $problem Nothing was installed." -Color Red
        exit $ExitUsage
    }
    $filedDate = $NotificationFiled.Trim()
}

# -Hosts a,b arrives as one string when the script is started with -File (install.cmd).
$hostList = @()
if ($Hosts) {
    foreach ($item in $Hosts) {
        foreach ($name in ("$item" -split ',')) {
            $name = $name.Trim().ToLowerInvariant()
            if ($name -eq '') {
                continue
            }
            if ($name -notmatch '^[a-z0-9][a-z0-9-]*$') {
                Write-Step -Message "-Hosts: '$name' is not a host name (for example codex, claude-desktop). Nothing was installed." -Color Red
                exit $ExitUsage
            }
            if ($hostList -notcontains $name) {
                $hostList += $name
            }
        }
    }
}

if (-not $InstallDir) {
    if (-not $env:LOCALAPPDATA) {
        Write-Step -Message 'LOCALAPPDATA is not set; give -InstallDir.' -Color Red
        exit $ExitUsage
    }
    $InstallDir = Join-Path -Path $env:LOCALAPPDATA -ChildPath 'Programs\ReadingRoom'
}
$installPath = Get-FullPath -Path $InstallDir
$adminPath = Join-Path -Path $installPath -ChildPath $AdminExe

$candidates = @(Get-BundleCandidate -Explicit $BundleDir)
$bundle = $null
foreach ($candidate in $candidates) {
    if (Test-Path -LiteralPath (Join-Path -Path $candidate -ChildPath $AdminExe) -PathType Leaf) {
        $bundle = $candidate
        break
    }
}
if (-not $bundle) {
    Write-Step -Message "No readingroom bundle (a folder holding $AdminExe) was found. Looked in:" -Color Red
    foreach ($place in $candidates) {
        Write-Step -Message "    $place" -Color Red
    }
    Write-Step -Message ('Unpack the release zip and run installer\install.ps1 from it, build the bundle ' +
        'with "python build\freeze.py", or give -BundleDir.') -Color Red
    exit $ExitFailed
}
if (-not (Test-Path -LiteralPath (Join-Path -Path $bundle -ChildPath 'ndl-mcp.exe') -PathType Leaf)) {
    Write-Warning "The bundle at $bundle has no ndl-mcp.exe; the self-test will fail."
}
if ((Test-InsidePath -Path $installPath -Folder $bundle) -or (Test-InsidePath -Path $bundle -Folder $installPath)) {
    Write-Step -Message "The install folder $installPath and the bundle $bundle overlap; unpack the release somewhere else and run the installer from there." -Color Red
    exit $ExitUsage
}
if (Test-ProtectedFolder -Path $installPath) {
    Write-Step -Message "Refusing to install into $installPath; choose a folder of its own, such as $(Join-Path -Path $installPath -ChildPath 'ReadingRoom')." -Color Red
    exit $ExitUsage
}
if ((Test-Path -LiteralPath $installPath) -and -not (Test-Path -LiteralPath $adminPath -PathType Leaf)) {
    if (@(Get-ChildItem -LiteralPath $installPath -Force).Count -gt 0) {
        Write-Step -Message "$installPath is not empty and holds no readingroom install; refusing to replace it. Choose another -InstallDir." -Color Red
        exit $ExitUsage
    }
}

$booksPath = $null
if ($Books) {
    $booksPath = Get-FullPath -Path $Books
    if (-not (Test-Path -LiteralPath $booksPath -PathType Container)) {
        Write-Step -Message "-Books $Books is not a folder." -Color Red
        exit $ExitUsage
    }
}

$dataPath = $null
if ($DataDir) {
    $dataPath = Get-FullPath -Path $DataDir
}
else {
    $recordedData = Get-InstallRecordValue -Folder $installPath -Key 'data-dir'
    if ($recordedData) {
        $dataPath = $recordedData
        Write-Step -Message "Using the data folder the previous install recorded: $dataPath"
    }
}
$dataPathForLookup = $dataPath
if (-not $dataPathForLookup -and $env:USERPROFILE) {
    $dataPathForLookup = Join-Path -Path $env:USERPROFILE -ChildPath 'ReadingRoom'
}
if ($dataPath -and (Test-InsidePath -Path $dataPath -Folder $installPath)) {
    Write-Step -Message "The data folder $dataPath must not lie inside the install folder (an update or uninstall would delete it)." -Color Red
    exit $ExitUsage
}

Write-Step -Message "readingroom installer" -Color Cyan
Write-Step -Message "  bundle:         $bundle"
Write-Step -Message "  install folder: $installPath"
if ($dataPath) {
    Write-Step -Message "  data folder:    $dataPath"
}
else {
    Write-Step -Message "  data folder:    setup's default ($dataPathForLookup)"
}

# --- 2. The NDL notification gate ------------------------------------------------------------

if (-not $filedDate) {
    $recorded = $null
    if ($dataPathForLookup) {
        $recorded = Get-RecordedNotificationDate -Folder $dataPathForLookup
    }
    if ($recorded) {
        Write-Step -Message "NDL notification: filed $recorded (recorded in $dataPathForLookup)."
    }
    elseif ($WhatIfPreference) {
        Write-Step -Message ("What if: no NDL notification date is given or recorded; an interactive run " +
            "would show $NdlFormUrl and ask for the date, otherwise ndl-mcp would not be registered.")
    }
    elseif (Test-Interactive) {
        $filedDate = Read-NotificationDate
        if (-not $filedDate) {
            Write-Step -Message 'No date given: installing without registering ndl-mcp. Run the installer again with -NotificationFiled yyyy-MM-dd once you have filed the notification.' -Color Yellow
        }
    }
    else {
        Write-Step -Message ("No NDL notification date given or recorded: ndl-mcp will not be registered. " +
            "File the notification at $NdlFormUrl, then run the installer again with " +
            "-NotificationFiled yyyy-MM-dd.") -Color Yellow
    }
}

# --- 3. Copy the bundle ----------------------------------------------------------------------

if ($PSCmdlet.ShouldProcess($installPath, "Install readingroom from $bundle")) {
    $running = @(Get-ProcessFromFolder -Folder $installPath)
    if ($running.Count -gt 0) {
        $names = ($running | ForEach-Object { $_.Name } | Sort-Object -Unique) -join ', '
        Write-Step -Message "Programs from $installPath are running ($names). Quit Claude Desktop, Codex and any other assistant using readingroom, then run the installer again." -Color Red
        exit $ExitFailed
    }
    $stamp = Get-Date -Format 'yyyyMMdd-HHmmss'
    $parent = Split-Path -Path $installPath -Parent
    $leaf = Split-Path -Path $installPath -Leaf
    $stage = Join-Path -Path $parent -ChildPath "$leaf.new-$stamp"
    $old = Join-Path -Path $parent -ChildPath "$leaf.old-$stamp"
    try {
        if (-not (Test-Path -LiteralPath $parent)) {
            New-Item -ItemType Directory -Path $parent -Force -Confirm:$false | Out-Null
        }
        Copy-Item -LiteralPath $bundle -Destination $stage -Recurse -Force -Confirm:$false
        foreach ($name in @('uninstall.ps1', 'uninstall.cmd', 'README.txt')) {
            $source = Join-Path -Path $PSScriptRoot -ChildPath $name
            if (Test-Path -LiteralPath $source -PathType Leaf) {
                Copy-Item -LiteralPath $source -Destination $stage -Force -Confirm:$false
            }
        }
        $record = @(
            '# Written by install.ps1 and read by uninstall.ps1 and the next install.ps1.',
            "installed=$((Get-Date).ToString('s'))",
            "bundle=$bundle"
        )
        if ($dataPath) {
            $record += "data-dir=$dataPath"
        }
        # WriteAllLines writes UTF-8 without a byte order mark.
        [IO.File]::WriteAllLines((Join-Path -Path $stage -ChildPath $InstallRecordName), [string[]]$record)
        # Files from a downloaded zip carry the Mark of the Web; SmartScreen would stop them.
        Get-ChildItem -LiteralPath $stage -Recurse -File | Unblock-File -Confirm:$false
        if (Test-Path -LiteralPath $installPath) {
            Move-Folder -From $installPath -To $old
        }
        Move-Folder -From $stage -To $installPath
    }
    catch {
        Write-Step -Message "Copying the bundle failed: $($_.Exception.Message)" -Color Red
        try {
            if ((Test-Path -LiteralPath $old) -and -not (Test-Path -LiteralPath $installPath)) {
                Move-Folder -From $old -To $installPath
            }
            if (Test-Path -LiteralPath $stage) {
                Remove-Item -LiteralPath $stage -Recurse -Force -Confirm:$false
            }
        }
        catch {
            Write-Warning "Could not tidy up after the failed copy ($($_.Exception.Message)); look for $leaf.new-$stamp and $leaf.old-$stamp next to $installPath."
        }
        Write-Step -Message 'If a file is in use, quit the assistants that use readingroom and run the installer again.' -Color Red
        exit $ExitFailed
    }
    if (Test-Path -LiteralPath $old) {
        try {
            Remove-Item -LiteralPath $old -Recurse -Force -Confirm:$false
        }
        catch {
            Write-Warning "The previous version was kept at $old ($($_.Exception.Message)); delete it later."
        }
    }
    Write-Step -Message "Installed to $installPath." -Color Green
}
elseif (-not $WhatIfPreference -and -not (Test-Path -LiteralPath $adminPath -PathType Leaf)) {
    Write-Step -Message 'Nothing was installed.'
    exit $ExitOk
}

# --- 4. Optional secrets, then host registration by readingroom setup ----------------------

if ($WhatIfPreference) {
    foreach ($secret in $OptionalSecrets) {
        Write-Step -Message ("What if: an interactive run would ask for $($secret.Name) " +
            "($($secret.What), optional; $($secret.Register)).")
    }
}
elseif (Test-Interactive) {
    Read-OptionalSecret -Admin $adminPath
}
else {
    foreach ($secret in $OptionalSecrets) {
        Write-Step -Message ("$($secret.Server) is registered without asking for $($secret.Name) " +
            "(its tools answer NOT_CONFIGURED until it is stored); " +
            "apply at $($secret.Register) and store it with: readingroom secrets set $($secret.Name)")
    }
}

$setupArgs = @('setup', '--install-dir', $installPath)
if ($filedDate) {
    $setupArgs += @('--notification-filed', $filedDate)
}
if ($hostList.Count -gt 0) {
    $setupArgs += @('--hosts', ($hostList -join ','))
}
if ($dataPath) {
    $setupArgs += @('--data-dir', $dataPath)
}
if ($NoSelfTest) {
    $setupArgs += '--no-self-test'
}
if ($booksPath) {
    $setupArgs += @('--books', $booksPath)
}
if ($Zotero) {
    $setupArgs += '--zotero'
}
$display = Format-CommandLine -Exe $adminPath -Arguments $setupArgs

if (-not $PSCmdlet.ShouldProcess('your AI assistants'' configuration files', "Register the servers: $display")) {
    if ($WhatIfPreference) {
        Write-Step -Message ('readingroom setup has no dry run, so under -WhatIf it was not started; ' +
            'it would change the host configuration files (with backups).')
    }
    exit $ExitOk
}

Write-Step -Message "Running: $display"
try {
    & $adminPath @setupArgs
    $setupExit = $LASTEXITCODE
}
catch {
    Write-Step -Message ("Could not start $adminPath ($($_.Exception.Message)). If Windows Defender or " +
        'SmartScreen blocked it, see docs\install.md, Troubleshooting.') -Color Red
    exit $ExitFailed
}
if ($setupExit -eq 0) {
    Write-Step -Message 'Done. Quit and restart your assistants (Claude Desktop: quit it from the tray icon) to load readingroom.' -Color Green
    $nowRecorded = $null
    if ($dataPathForLookup) {
        $nowRecorded = Get-RecordedNotificationDate -Folder $dataPathForLookup
    }
    if (-not $filedDate -and -not $nowRecorded) {
        Write-Step -Message "ndl-mcp is not registered yet: file the notification at $NdlFormUrl, then run the installer again with -NotificationFiled yyyy-MM-dd." -Color Yellow
    }
}
elseif ($setupExit -eq $ExitUsage) {
    Write-Step -Message "readingroom setup refused its arguments (exit $setupExit); the files are installed in $installPath." -Color Red
}
else {
    Write-Step -Message ("readingroom setup reported a problem (exit $setupExit); the files are installed in " +
        "$installPath. Fix what it names and run the installer again.") -Color Red
}
exit $setupExit
