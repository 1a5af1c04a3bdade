;; UNSOLVABLE: p03 with truck t2 removed, the only truck of city2;
;; p1 must reach l2a, which is not an airport, and airplanes only
;; reach airports.
(define (problem logistics-p09)
  (:domain logistics)
  (:objects
    city1 city2 - city
    ap1 ap2 - airport
    l1a l2a l2b - location
    t1 - truck
    a1 - airplane
    p1 - package)
  (:init
    (in-city ap1 city1) (in-city l1a city1)
    (in-city ap2 city2) (in-city l2a city2) (in-city l2b city2)
    (at t1 ap1)
    (at a1 ap2)
    (at p1 l1a)
    (= (total-cost) 0))
  (:goal (and
    (at p1 l2a)))
  (:metric minimize (total-cost)))
