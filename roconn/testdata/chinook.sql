-- Analyst queries on Chinook (a public sample database, not in this
-- repository: the tests and benchmarks that use it look for it at
-- ../../shared/data/chinook/chinook.sqlite and skip when it is absent),
-- under cmd/sqlbot/testdata/chinook/policy.yaml. Each record starts with
-- "-- name: CATEGORY/NAME"; "-capped" names return more rows than the cap.
-- name: count/tracks
SELECT count(*) AS tracks FROM Track
-- name: count/albums-per-artist
SELECT ar.Name, count(*) AS albums FROM Artist ar JOIN Album al ON al.ArtistId = ar.ArtistId GROUP BY ar.ArtistId ORDER BY albums DESC, ar.Name LIMIT 10
-- name: rank/top-artists-by-tracks
SELECT artist, tracks FROM (SELECT ar.Name AS artist, count(*) AS tracks, rank() OVER (ORDER BY count(*) DESC) AS r FROM Track t JOIN Album al ON al.AlbumId = t.AlbumId JOIN Artist ar ON ar.ArtistId = al.ArtistId GROUP BY ar.ArtistId) WHERE r <= 5
-- name: revenue/by-genre
SELECT g.Name AS genre, round(sum(il.UnitPrice * il.Quantity), 2) AS revenue FROM InvoiceLine il JOIN Track t ON t.TrackId = il.TrackId JOIN Genre g ON g.GenreId = t.GenreId GROUP BY g.GenreId ORDER BY revenue DESC
-- name: revenue/by-media-type
SELECT m.Name, round(sum(il.UnitPrice * il.Quantity), 2) AS revenue, count(*) AS lines FROM InvoiceLine il JOIN Track t ON t.TrackId = il.TrackId JOIN MediaType m ON m.MediaTypeId = t.MediaTypeId GROUP BY m.MediaTypeId ORDER BY revenue DESC
-- name: revenue/top-albums
SELECT al.Title, ar.Name, round(sum(il.UnitPrice * il.Quantity), 2) AS revenue FROM InvoiceLine il JOIN Track t ON t.TrackId = il.TrackId JOIN Album al ON al.AlbumId = t.AlbumId JOIN Artist ar ON ar.ArtistId = al.ArtistId GROUP BY al.AlbumId ORDER BY revenue DESC, al.Title LIMIT 10
-- name: revenue/per-invoice-distribution
SELECT CASE WHEN total < 2 THEN 'under 2' WHEN total < 5 THEN '2 to 5' WHEN total < 10 THEN '5 to 10' ELSE '10 or more' END AS band, count(*) AS invoices FROM (SELECT InvoiceId, sum(UnitPrice * Quantity) AS total FROM InvoiceLine GROUP BY InvoiceId) GROUP BY band ORDER BY min(total)
-- name: length/avg-minutes-by-genre
SELECT g.Name, round(avg(t.Milliseconds) / 60000.0, 2) AS minutes FROM Track t JOIN Genre g ON g.GenreId = t.GenreId GROUP BY g.GenreId ORDER BY minutes DESC
-- name: length/longest-tracks
SELECT t.Name, al.Title, t.Milliseconds FROM Track t JOIN Album al ON al.AlbumId = t.AlbumId ORDER BY t.Milliseconds DESC LIMIT 10
-- name: length/jazz-average
SELECT round(avg(t.Milliseconds) / 60000.0, 2) AS minutes FROM Track t JOIN Genre g ON g.GenreId = t.GenreId WHERE g.Name = 'Jazz'
-- name: sales/never-sold-count
SELECT count(*) AS unsold FROM Track WHERE TrackId NOT IN (SELECT TrackId FROM InvoiceLine)
-- name: sales/unsold-genres
SELECT g.Name AS genre FROM Genre g WHERE NOT EXISTS (SELECT 1 FROM Track t JOIN InvoiceLine il ON il.TrackId = t.TrackId WHERE t.GenreId = g.GenreId)
-- name: sales/best-selling-tracks
SELECT t.Name, sum(il.Quantity) AS sold FROM InvoiceLine il JOIN Track t ON t.TrackId = il.TrackId GROUP BY t.TrackId ORDER BY sold DESC, t.Name LIMIT 10
-- name: sales/share-by-genre
SELECT g.Name, round(100.0 * sum(il.UnitPrice * il.Quantity) / (SELECT sum(UnitPrice * Quantity) FROM InvoiceLine), 1) AS pct FROM InvoiceLine il JOIN Track t ON t.TrackId = il.TrackId JOIN Genre g ON g.GenreId = t.GenreId GROUP BY g.GenreId ORDER BY pct DESC
-- name: sales/artists-with-no-sales
SELECT count(*) FROM Artist ar WHERE NOT EXISTS (SELECT 1 FROM Album al JOIN Track t ON t.AlbumId = al.AlbumId JOIN InvoiceLine il ON il.TrackId = t.TrackId WHERE al.ArtistId = ar.ArtistId)
-- name: sales/cumulative-by-genre
SELECT genre, revenue, sum(revenue) OVER (ORDER BY revenue DESC ROWS UNBOUNDED PRECEDING) AS running FROM (SELECT g.Name AS genre, round(sum(il.UnitPrice * il.Quantity), 2) AS revenue FROM InvoiceLine il JOIN Track t ON t.TrackId = il.TrackId JOIN Genre g ON g.GenreId = t.GenreId GROUP BY g.GenreId)
-- name: playlist/largest
SELECT max(n) AS tracks FROM (SELECT count(*) AS n FROM PlaylistTrack GROUP BY PlaylistId)
-- name: playlist/sizes
SELECT p.Name, count(pt.TrackId) AS tracks FROM Playlist p LEFT JOIN PlaylistTrack pt ON pt.PlaylistId = p.PlaylistId GROUP BY p.PlaylistId ORDER BY tracks DESC, p.Name
-- name: playlist/genres-in-music
SELECT g.Name, count(*) AS n FROM PlaylistTrack pt JOIN Playlist p ON p.PlaylistId = pt.PlaylistId JOIN Track t ON t.TrackId = pt.TrackId JOIN Genre g ON g.GenreId = t.GenreId WHERE p.Name = 'Music' GROUP BY g.GenreId ORDER BY n DESC LIMIT 5
-- name: playlist/tracks-in-no-playlist
SELECT count(*) FROM Track t LEFT JOIN PlaylistTrack pt ON pt.TrackId = t.TrackId WHERE pt.TrackId IS NULL
-- name: catalogue/composers
SELECT Composer, count(*) AS tracks FROM Track WHERE Composer IS NOT NULL GROUP BY Composer ORDER BY tracks DESC, Composer LIMIT 10
-- name: catalogue/unknown-composer
SELECT count(*) FROM Track WHERE Composer IS NULL
-- name: catalogue/title-search
SELECT t.Name, al.Title FROM Track t JOIN Album al ON al.AlbumId = t.AlbumId WHERE t.Name LIKE '%love%' ORDER BY t.Name LIMIT 20
-- name: catalogue/album-search
SELECT Title FROM Album WHERE Title GLOB '*Greatest*' OR instr(lower(Title), 'best') > 0 ORDER BY Title
-- name: catalogue/media-types
SELECT m.Name AS media_type, count(*) AS tracks FROM Track t JOIN MediaType m ON m.MediaTypeId = t.MediaTypeId GROUP BY m.MediaTypeId
-- name: catalogue/price-points
SELECT UnitPrice, count(*) FROM Track GROUP BY UnitPrice ORDER BY UnitPrice
-- name: catalogue/size-by-media
SELECT m.Name, round(avg(t.Bytes) / 1048576.0, 1) AS avg_mb, round(max(t.Bytes) / 1048576.0, 1) AS max_mb FROM Track t JOIN MediaType m ON m.MediaTypeId = t.MediaTypeId GROUP BY m.MediaTypeId ORDER BY avg_mb DESC
-- name: catalogue/acdc-albums
SELECT count(*) AS albums FROM Album al JOIN Artist ar ON ar.ArtistId = al.ArtistId WHERE ar.Name = 'AC/DC'
-- name: catalogue/albums-with-most-tracks
SELECT al.Title, count(*) AS n, dense_rank() OVER (ORDER BY count(*) DESC) AS r FROM Album al JOIN Track t ON t.AlbumId = al.AlbumId GROUP BY al.AlbumId ORDER BY n DESC, al.Title LIMIT 10
-- name: catalogue/tracks-per-genre-ntile
SELECT genre, n, ntile(4) OVER (ORDER BY n) AS quartile FROM (SELECT g.Name AS genre, count(*) AS n FROM Track t JOIN Genre g ON g.GenreId = t.GenreId GROUP BY g.GenreId) ORDER BY n
-- name: catalogue/all-tracks-capped
SELECT TrackId, Name, Milliseconds FROM Track ORDER BY TrackId
-- name: catalogue/artist-name-lengths
SELECT length(Name) AS len, count(*) FROM Artist GROUP BY len ORDER BY len
