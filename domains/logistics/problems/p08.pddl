;; Four cities, two airplanes, eight packages: the longest chains in
;; the suite; every package crosses cities and needs trucks at both
;; ends.
(define (problem logistics-p08)
  (:domain logistics)
  (:objects
    city1 city2 city3 city4 - city
    ap1 ap2 ap3 ap4 - airport
    l1a l1b l2a l2b l3a l3b l4a - location
    t1 t2 t3 t4 - truck
    a1 a2 - airplane
    p1 p2 p3 p4 p5 p6 p7 p8 - package)
  (:init
    (in-city ap1 city1) (in-city l1a city1) (in-city l1b city1)
    (in-city ap2 city2) (in-city l2a city2) (in-city l2b city2)
    (in-city ap3 city3) (in-city l3a city3) (in-city l3b city3)
    (in-city ap4 city4) (in-city l4a city4)
    (at t1 l1a)
    (at t2 ap2)
    (at t3 l3b)
    (at t4 ap4)
    (at a1 ap1)
    (at a2 ap3)
    (at p1 l1a)
    (at p2 l1b)
    (at p3 l2a)
    (at p4 l2b)
    (at p5 l3a)
    (at p6 l3b)
    (at p7 l4a)
    (at p8 l4a)
    (= (total-cost) 0))
  (:goal (and
    (at p1 l2a)
    (at p2 l3b)
    (at p3 l4a)
    (at p4 l1b)
    (at p5 l1a)
    (at p6 l2b)
    (at p7 l3a)
    (at p8 l1b)))
  (:metric minimize (total-cost)))
